import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { IsIn, IsNotEmpty, IsOptional, IsString, MaxLength } from 'class-validator';
import { Role, ROLES } from '../access/roles';
import { PASSWORD_MAX, PASSWORD_MIN } from './credentials';

// The address, name and password rules themselves are credentials.ts's (the service applies
// them, for the page and the API alike); these only shape the JSON.

@ApiSchema({ name: 'CreateFirstPerson' })
export class CreateFirstPersonDto {
  @ApiProperty({ example: 'ada@example.com', maxLength: 254 })
  @MaxLength(254)
  @IsString()
  email!: string;

  @ApiProperty({ example: 'Ada Lovelace', maxLength: 200 })
  @MaxLength(200)
  @IsNotEmpty()
  @IsString()
  name!: string;

  @ApiProperty({ minLength: PASSWORD_MIN, maxLength: PASSWORD_MAX, description: 'stored as an argon2id hash; never shown again' })
  @MaxLength(PASSWORD_MAX * 4)
  @IsString()
  password!: string;
}

@ApiSchema({ name: 'UpdatePerson' })
export class UpdatePersonDto {
  @ApiPropertyOptional({ enum: ROLES, enumName: 'Role' })
  @IsOptional()
  @IsIn(ROLES)
  role?: Role;

  @ApiPropertyOptional({ maxLength: 200 })
  @IsOptional()
  @MaxLength(200)
  @IsNotEmpty()
  @IsString()
  name?: string;
}

@ApiSchema({ name: 'CreateInvitation' })
export class CreateInvitationDto {
  @ApiProperty({ example: 'grace@example.com', maxLength: 254 })
  @MaxLength(254)
  @IsString()
  email!: string;

  @ApiProperty({ enum: ROLES, enumName: 'Role', example: 'editor' })
  @IsIn(ROLES)
  role!: Role;
}
